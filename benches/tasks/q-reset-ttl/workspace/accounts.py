import secrets
import time

from settings import RESET_TOKEN_TTL

_tokens = {}


def create_reset_token(user_id):
    token = secrets.token_urlsafe(16)
    _tokens[token] = (user_id, time.time() + RESET_TOKEN_TTL)
    return token


def redeem_reset_token(token):
    user_id, expires = _tokens.pop(token, (None, 0))
    if time.time() > expires:
        return None
    return user_id
