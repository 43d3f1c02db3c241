'use strict';

// Shipping in cents: free from 5000 cents of goods; otherwise 499 for up to 2 kg and
// 150 per started kg over that. Express doubles the price and is never free.
function shippingCost(subtotalCents, weightKg, express = false) {
  if (subtotalCents >= 5000 && !express) return 0;
  let cost = 499;
  if (weightKg > 2) {
    cost += Math.ceil(weightKg - 2) * 150;
  }
  if (express) cost *= 2;
  return cost;
}

// Goods plus shipping for items like { priceCents, quantity, weightKg }.
function orderTotal(items, express = false) {
  let subtotal = 0;
  let weight = 0;
  for (const item of items) {
    subtotal += item.priceCents * item.quantity;
    weight += item.weightKg * item.quantity;
  }
  return subtotal + shippingCost(subtotal, weight, express);
}

module.exports = { shippingCost, orderTotal };
