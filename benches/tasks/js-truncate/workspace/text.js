'use strict';

const ELLIPSIS = '…';

// Shorten str to at most max characters, ending with an ellipsis when cut.
function truncate(str, max) {
  if (str.length <= max) {
    return str;
  }
  return str.slice(0, max) + ELLIPSIS;
}

function wordCount(str) {
  const words = str.trim().split(/\s+/);
  return words[0] === '' ? 0 : words.length;
}

module.exports = { truncate, wordCount, ELLIPSIS };
