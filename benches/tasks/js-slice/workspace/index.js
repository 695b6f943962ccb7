const { capitalize, shout } = require("./utils.js");

console.log(capitalize("hello"), shout("hi"));
