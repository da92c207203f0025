"""Plug-ins that give other Kafka clients kgroup's implementations."""
