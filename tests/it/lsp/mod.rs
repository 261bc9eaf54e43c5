//! The language server, over pipes and in headless Neovim.

mod nvim;
mod server;
