"""Generated from proto/arena/v1 by tools/protogen.py; never edit by hand."""
