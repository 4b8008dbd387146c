"""Render: takes the selected items and feeds, gives document bytes (feeds and site pages). Pure."""
