// Tests from the upstream fix, run against the public API.
extern crate strsim;

use strsim::jaro_winkler;

macro_rules! assert_delta {
    ($x:expr, $y:expr) => {
        assert_delta!($x, $y, 1e-5);
    };
    ($x:expr, $y:expr, $d:expr) => {
        if ($x - $y).abs() > $d {
            panic!(
                "assertion failed: actual: `{}`, expected: `{}`: \
                actual not within < {} of expected",
                $x, $y, $d
            );
        }
    };
}

#[test]
fn jaro_winkler_names() {
    assert_delta!(
        0.452,
        jaro_winkler("Friedrich Nietzsche", "Fran-Paul Sartre"),
        0.001
    );
}

#[test]
fn jaro_winkler_very_long_prefix() {
    assert_delta!(
        0.98519,
        jaro_winkler("thequickbrownfoxjumpedoverx", "thequickbrownfoxjumpedovery")
    );
}
