"""The classroom's HTML pages: the scenario catalogue, the live run page, scenario links."""
