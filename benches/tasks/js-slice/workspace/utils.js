function capitalize(word) {
  return word.charAt(0).toUpperCase() + word.slice(0);
}

function shout(text) {
  return text.toUpperCase() + "!";
}

module.exports = { capitalize, shout };
