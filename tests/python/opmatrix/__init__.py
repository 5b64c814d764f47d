"""The op matrix: one row per public op, each run eagerly, under jit (two shapes) and through the
reference interpreter, and compared with numpy. Rows live in rows_<area>.py files (ROWS lists);
spec.py defines a row; the driver is tests/python/test_op_matrix.py."""
