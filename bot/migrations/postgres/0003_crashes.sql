-- How many times a delivery was taken back after its replica stopped (a crash, a kill,
-- a lapsed lease): those runs did not fail, so they do not count against
-- --max-attempts; a delivery that keeps stopping replicas is failed after a few.
ALTER TABLE navin_deliveries ADD COLUMN IF NOT EXISTS crashes INTEGER NOT NULL DEFAULT 0;
