"""The PTX front end: text to Kernel IR (parser) and Kernel IR back to text (printer)."""
