//! Every diagnostic code, its first-line template and its long explanation.
