"""Account settings."""

SESSION_TTL = 8 * 60 * 60          # seconds
REMEMBER_ME_DAYS = 30
RESET_TOKEN_TTL = 45 * 60          # seconds
MAX_LOGIN_ATTEMPTS = 5
LOCKOUT_MINUTES = 15
