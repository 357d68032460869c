"""The hidden column names and id layout the Spark backend adds to a stream's frame."""

ID = "__acel_id"
"""``monotonically_increasing_id``: input partition in the high bits, row in the low ones."""
IN = "__acel_in"
"""The input order of a row, before any sort by time."""
TKEY = "__acel_tkey"
"""The time column's sort key."""
MAX_EXAMPLES = 5
"""Bad rows quoted per problem in a data error."""
LOW_BITS = 33
"""Bits of an id that hold the row within its input partition."""
