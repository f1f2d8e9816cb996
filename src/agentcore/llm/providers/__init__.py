"""Provider adapters, one module per wire protocol, imported lazily by the registry."""
