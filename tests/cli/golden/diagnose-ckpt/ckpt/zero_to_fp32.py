# consolidates ZeRO shards
