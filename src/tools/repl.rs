//! REPL: one persistent interpreter per language and conversation.

/// The running interpreters of one conversation.
#[derive(Default)]
pub struct Interpreters {}

impl Interpreters {
    /// Kills every interpreter and its children.
    pub fn kill_all(&mut self) {}
}
