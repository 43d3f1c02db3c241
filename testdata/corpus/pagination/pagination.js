'use strict';

// Page `page` (counted from 1) of items with `perPage` per page, clamped to the pages
// there are, with the page count and whether there is a previous and a next page.
function paginate(items, page, perPage) {
  const totalPages = Math.max(1, Math.ceil(items.length / perPage));
  const current = Math.min(Math.max(page, 1), totalPages);
  const start = (current - 1) * perPage;
  return {
    items: items.slice(start, start + perPage),
    page: current,
    totalPages,
    hasPrev: current > 1,
    hasNext: current < totalPages,
  };
}

module.exports = { paginate };
