"""Data only: this file makes the folder package data, so a wheel ships it and settings can find it."""
