// A shopping cart for the Jest sample; `total` and `remove` have bugs the tests expose.
function total(items) {
  return items.reduce((sum, item) => sum + item.price, 0) * 1.1;
}

function remove(items, name) {
  const index = items.findIndex((item) => item.name === name);
  items.splice(index, 1);
  return items;
}

module.exports = { total, remove };
