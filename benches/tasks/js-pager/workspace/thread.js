'use strict';
// Renders one page of a comment thread as plain text (used by the e-mail digest).
const { totalPages, paginate, rangeLabel } = require('./pager');

const PER_PAGE = 10;

function renderPage(comments, page, perPage = PER_PAGE) {
  const lines = paginate(comments, page, perPage).map(
    (c) => `${c.author}: ${c.text}`
  );
  lines.push(rangeLabel(comments.length, page, perPage));
  lines.push(`Page ${page} of ${totalPages(comments.length, perPage)}`);
  return lines.join('\n');
}

module.exports = { renderPage };

if (require.main === module) {
  const demo = Array.from({ length: 23 }, (_, i) => ({
    author: `user${i + 1}`,
    text: `comment number ${i + 1}`,
  }));
  console.log(renderPage(demo, Number(process.argv[2] || 1)));
}
