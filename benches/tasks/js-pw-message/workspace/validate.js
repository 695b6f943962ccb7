'use strict';

const MIN_LENGTH = 8;

// Returns a list of problems with the password; empty when it is fine.
function passwordErrors(password) {
  const errors = [];
  if (password.length < MIN_LENGTH) {
    errors.push('Password too short.');
  }
  if (!/[0-9]/.test(password)) {
    errors.push('Password must contain a digit.');
  }
  return errors;
}

module.exports = { passwordErrors, MIN_LENGTH };
