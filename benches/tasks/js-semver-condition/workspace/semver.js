'use strict';
/**
 * Minimal semantic-version helpers for the plugin loader.
 * Only MAJOR.MINOR.PATCH is supported (an optional leading "v" is allowed);
 * pre-release tags are rejected.
 */

function parse(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(String(version).trim());
  if (!m) throw new TypeError(`invalid version: ${version}`);
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

/** True when `version` is the same as or newer than `minimum`. */
function isAtLeast(version, minimum) {
  const a = parse(version);
  const b = parse(minimum);
  return a.major >= b.major && a.minor >= b.minor && a.patch >= b.patch;
}

/** Next version after bumping `part` ("major", "minor" or "patch"). */
function bump(version, part) {
  const v = parse(version);
  if (part === 'major') return `${v.major + 1}.0.0`;
  if (part === 'minor') return `${v.major}.${v.minor + 1}.0`;
  if (part === 'patch') return `${v.major}.${v.minor}.${v.patch + 1}`;
  throw new RangeError(`unknown part: ${part}`);
}

module.exports = { parse, isAtLeast, bump };
