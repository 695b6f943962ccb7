'use strict';
/**
 * Track catalogue. In production this talks to the media server; here the
 * catalogue is in memory, but the API stays asynchronous like the real one.
 */

const TRACKS = new Map([
  ['t1', { title: 'Harbour Lights', artist: 'The Quays', seconds: 214 }],
  ['t2', { title: 'Slow Orbit', artist: 'Mira Vale', seconds: 187 }],
  ['t3', { title: 'Paper Kites', artist: 'The Quays', seconds: 245 }],
  ['t4', { title: 'Long Night Drive', artist: 'Oskar Lind', seconds: 3702 }],
]);

/** Resolve to the track with `id`; reject if the catalogue has no such id. */
function getTrack(id) {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      const track = TRACKS.get(id);
      if (track) resolve({ id, ...track });
      else reject(new Error(`unknown track: ${id}`));
    }, 2);
  });
}

module.exports = { getTrack };
