// Tests from the upstream fix, run against the public API.
extern crate strsim;

use strsim::{jaro, jaro_winkler};

#[test]
fn jaro_same_one_character() {
    assert_eq!(1.0, jaro("a", "a"));
}

#[test]
fn jaro_winkler_same_one_character() {
    assert_eq!(1.0, jaro_winkler("a", "a"));
}
