// Test from the upstream fix, run against the public API.
use humantime::parse_duration;

#[test]
fn test_nice_error_message() {
    assert_eq!(parse_duration("123").unwrap_err().to_string(),
        "time unit needed, for example 123sec or 123ms");
    assert_eq!(parse_duration("10 months 1").unwrap_err().to_string(),
        "time unit needed, for example 1sec or 1ms");
    assert_eq!(parse_duration("10nights").unwrap_err().to_string(),
        "unknown time unit \"nights\", supported units: \
        ns, us, ms, sec, min, hours, days, weeks, months, \
        years (and few variations)");
}
