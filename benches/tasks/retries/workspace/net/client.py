from net.settings import BASE_URL, BACKOFF_SECONDS, MAX_RETRIES


def fetch(path, send):
    for attempt in range(MAX_RETRIES + 1):
        response = send(BASE_URL + path)
        if response is not None:
            return response
    return None
