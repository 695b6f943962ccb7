# Seconds to wait for the server.
TIMEOUT = 30
RETRIES = 3
