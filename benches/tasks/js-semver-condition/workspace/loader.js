'use strict';
// Decides which plugins can be loaded by this runtime version.
const { isAtLeast } = require('./semver');

const RUNTIME_VERSION = '2.0.0';

/** Split plugins into those we can load and those needing a newer runtime. */
function partition(plugins, runtime = RUNTIME_VERSION) {
  const loadable = [];
  const refused = [];
  for (const p of plugins) {
    (isAtLeast(runtime, p.requires) ? loadable : refused).push(p.name);
  }
  return { loadable, refused };
}

module.exports = { partition, RUNTIME_VERSION };

if (require.main === module) {
  const plugins = [
    { name: 'markdown', requires: '1.5.0' },
    { name: 'spellcheck', requires: '2.0.0' },
    { name: 'live-share', requires: '2.1.0' },
  ];
  console.log(JSON.stringify(partition(plugins)));
}
