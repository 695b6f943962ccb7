// Test from the upstream fix, run against the public API.
use humantime::parse_duration;

#[test]
fn test_nice_error_message() {
    assert_eq!(parse_duration("10").unwrap_err().to_string(),
        "time unit needed at 3, for example 100ms or 100sec");
    assert_eq!(parse_duration("10 months 1").unwrap_err().to_string(),
        "time unit needed at 12, for example 100ms or 100sec");
    assert_eq!(parse_duration("10nights").unwrap_err().to_string(),
        "unknown time unit at 3-8, supported units: \
        ns, us, ms, sec, min, hours, days, weeks, months, \
        years (and few variations)");
}
