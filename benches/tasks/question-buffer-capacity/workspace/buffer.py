"""Fixed-size ring buffer for sensor readings kept on the station."""

import config

SECONDS_PER_DAY = 86_400
READINGS_PER_DAY = SECONDS_PER_DAY // config.POLL_INTERVAL_S

# Room for the whole retention window plus the safety margin at both ends.
CAPACITY = READINGS_PER_DAY * config.RETENTION_DAYS + 2 * config.SAFETY_MARGIN


class RingBuffer:
    """Keeps the newest `capacity` readings; older ones are overwritten."""

    def __init__(self, capacity=CAPACITY):
        self.capacity = capacity
        self._items = [None] * capacity
        self._next = 0
        self._size = 0

    def append(self, reading):
        self._items[self._next] = reading
        self._next = (self._next + 1) % self.capacity
        self._size = min(self._size + 1, self.capacity)

    def __len__(self):
        return self._size

    def oldest_first(self):
        """All stored readings, oldest first."""
        start = (self._next - self._size) % self.capacity
        return [self._items[(start + i) % self.capacity]
                for i in range(self._size)]
