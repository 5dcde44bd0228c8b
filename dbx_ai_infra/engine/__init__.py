"""The offline engine: run the Pulumi program under Pulumi's mock runtime, record resources, check and price them."""
