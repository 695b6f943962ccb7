'use strict';

// Whether a digest email should go to this user.
function shouldEmail(user) {
  if (!user.email) {
    return false;
  }
  return !user.prefs.emailNotifications;
}

function displayName(user) {
  return user.name || user.email || 'anonymous';
}

module.exports = { shouldEmail, displayName };
