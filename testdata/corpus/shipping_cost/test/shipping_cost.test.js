'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { shippingCost, orderTotal } = require('../shipping_cost.js');

test('base price', () => {
  assert.equal(shippingCost(1000, 1), 499);
  assert.equal(shippingCost(1000, 2), 499);
});

test('extra started kilograms', () => {
  assert.equal(shippingCost(1000, 2.5), 649);
  assert.equal(shippingCost(1000, 4), 799);
});

test('free from 5000', () => {
  assert.equal(shippingCost(5000, 10), 0);
  assert.equal(shippingCost(4999, 1), 499);
});

test('express is doubled and never free', () => {
  assert.equal(shippingCost(1000, 1, true), 998);
  assert.equal(shippingCost(6000, 3, true), 1298);
});

test('order total', () => {
  const items = [
    { priceCents: 1200, quantity: 2, weightKg: 0.5 },
    { priceCents: 300, quantity: 1, weightKg: 2 },
  ];
  assert.equal(orderTotal(items), 2700 + 649);
});
