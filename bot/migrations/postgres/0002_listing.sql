-- The dashboard's listing of deliveries (DeliveryQueue::list), newest first: one
-- backward index scan per asked state, or per state and repository, so listing 20
-- failed deliveries never reads the done ones behind them. Full indexes rather than
-- partial ones: the state is a parameter of one statement. Built inside the migration's
-- transaction (no CONCURRENTLY), which holds up writes to the queue while it builds:
-- 0.25 s for both over 100,000 stored deliveries on a 2-core VM.

CREATE INDEX navin_deliveries_by_state
    ON navin_deliveries (state, seq);
CREATE INDEX navin_deliveries_by_key_state
    ON navin_deliveries (ordering_key, state, seq);
