package config

// Settings returns the paths of the settings that the mappings of a
// configuration may hold, as far as data reaches into them.
func Settings(data []byte) ([]string, error) {
	var paths []string
	_, err := parse(data, func(path string) { paths = append(paths, path) })
	return paths, err
}
