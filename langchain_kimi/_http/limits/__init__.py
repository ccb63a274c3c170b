"""The rate policy in front of the connections: one send rate per gateway and key (`rate`), the
queue of turns in front of it (`gate`), one retry decision per failure (`retry`), the
`Retry-After` forms (`retry_after`), and their numbers (`knobs`)."""
