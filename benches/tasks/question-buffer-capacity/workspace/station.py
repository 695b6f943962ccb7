"""Main loop of the weather station: poll sensors, buffer, upload."""

import time

import config
from buffer import RingBuffer


def read_sensors():
    """One reading from the (simulated) sensors."""
    return {"t": time.time(), "temp_c": 11.5, "rh": 0.72}


def run(polls, upload):
    """Poll `polls` times, uploading full batches as they accumulate."""
    buf = RingBuffer()
    sent = 0
    for _ in range(polls):
        buf.append(read_sensors())
        if len(buf) - sent >= config.UPLOAD_BATCH:
            upload(buf.oldest_first()[sent:sent + config.UPLOAD_BATCH])
            sent += config.UPLOAD_BATCH
    return buf
