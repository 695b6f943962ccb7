'use strict';

const { shouldEmail, displayName } = require('./prefs');

function recipients(users) {
  return users.filter(shouldEmail).map((u) => u.email);
}

function greeting(user) {
  return `Hi ${displayName(user)}, here is your weekly digest.`;
}

module.exports = { recipients, greeting };
