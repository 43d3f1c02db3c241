import unittest

from shop.pricing import bulk_discount, discounted


class DiscountTest(unittest.TestCase):
    def test_no_discount_keeps_the_price(self):
        self.assertEqual(discounted(1999, 0), 1999)

    def test_quarter_off(self):
        self.assertEqual(discounted(1000, 25), 750)

    def test_rejects_negative_discount(self):
        with self.assertRaises(ValueError):
            discounted(1000, -5)


class BulkTest(unittest.TestCase):
    def test_small_orders_pay_full_price(self):
        self.assertEqual(bulk_discount(3), 0)

    def test_ten_items_get_ten_percent(self):
        self.assertEqual(bulk_discount(10), 10)

    def test_fifty_items_get_twenty_percent(self):
        self.assertEqual(bulk_discount(50), 20)


if __name__ == "__main__":
    unittest.main()
