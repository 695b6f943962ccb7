"""Station configuration. Edit these, not the modules that use them."""

STATION_ID = "ridge-03"

# How often the sensors are polled, in seconds.
POLL_INTERVAL_S = 45

# How many days of readings to keep on the device between uploads.
RETENTION_DAYS = 2

# Extra slots at each end of the buffer so a late upload never races the
# writer. Counted per end.
SAFETY_MARGIN = 16

# Readings sent per upload request.
UPLOAD_BATCH = 500
