//! The optimiser, judged by the IR it leaves and by the simulator: a kernel
//! computes the same with the passes on and off.

mod lists;
mod passes;
