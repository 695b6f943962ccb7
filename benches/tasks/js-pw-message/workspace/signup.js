'use strict';

const { passwordErrors } = require('./validate');

function signup(username, password) {
  const errors = passwordErrors(password);
  if (errors.length > 0) {
    return { ok: false, errors };
  }
  return { ok: true, user: { username } };
}

module.exports = { signup };
