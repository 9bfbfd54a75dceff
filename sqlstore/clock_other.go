//go:build !linux

package sqlstore

func bootID() (string, error) { return "", errNoBootClock }

func bootClock() (int64, error) { return 0, errNoBootClock }
