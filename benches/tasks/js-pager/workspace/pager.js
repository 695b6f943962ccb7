'use strict';
/**
 * Pagination helpers for the comment thread view.
 * Pages are 1-based, as shown in the UI.
 */

/** Number of pages needed for `count` items (at least 1, even when empty). */
function totalPages(count, perPage) {
  if (perPage <= 0) throw new RangeError('perPage must be positive');
  return Math.max(1, Math.ceil(count / perPage));
}

/** The items shown on page `page`. Pages past the end are empty. */
function paginate(items, page, perPage) {
  if (page < 1) throw new RangeError('page is 1-based');
  const start = (page - 1) * perPage;
  return items.slice(start, start + perPage - 1);
}

/** Label such as "Showing 11-20 of 45". */
function rangeLabel(count, page, perPage) {
  if (count === 0) return 'No comments yet';
  const first = (page - 1) * perPage + 1;
  const last = Math.min(page * perPage, count);
  return `Showing ${first}-${last} of ${count}`;
}

module.exports = { totalPages, paginate, rangeLabel };
