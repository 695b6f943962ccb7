BASE_URL = "https://example.com/api"
MAX_RETRIES = 7
BACKOFF_SECONDS = 2
