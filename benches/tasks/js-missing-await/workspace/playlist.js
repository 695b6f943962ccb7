'use strict';
const { getTrack } = require('./library');

/** Total running time of the tracks in `trackIds`, in seconds. */
async function totalDuration(trackIds) {
  let total = 0;
  for (const id of trackIds) {
    const track = getTrack(id);
    total += track.seconds;
  }
  return total;
}

/** 245 -> "4:05", 3725 -> "1:02:05". */
function formatDuration(seconds) {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = String(seconds % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** One-line description shown in the playlist sidebar. */
async function summary(name, trackIds) {
  const seconds = await totalDuration(trackIds);
  const n = trackIds.length;
  return `${name}: ${n} track${n === 1 ? '' : 's'}, ${formatDuration(seconds)}`;
}

module.exports = { totalDuration, formatDuration, summary };

if (require.main === module) {
  summary('Evening', ['t1', 't2', 't3']).then(console.log);
}
