package provider

import (
	"strings"

	"golang.org/x/text/language"
)

// LanguageTag returns a language as a BCP 47 tag ("en", "en-US",
// "pt-BR"), however a provider's answer or a person writes it: a code
// (Deepgram's "en", AssemblyAI's "en_us", "pt-br") or, as Whisper's
// verbose_json does, an English name ("english"). A name it does not
// know is kept as written, trimmed; "" stays "".
func LanguageTag(said string) string {
	said = strings.TrimSpace(said)
	if said == "" {
		return ""
	}
	if code, ok := whisperLanguages[strings.ToLower(said)]; ok {
		return code
	}
	if tag, err := language.Parse(strings.ReplaceAll(said, "_", "-")); err == nil {
		return tag.String()
	}
	return said
}

// whisperLanguages are the names Whisper gives the languages it detects,
// in its verbose_json's language (OpenAI's whisper-1, Groq, whisper.cpp
// and the servers built on it), with their codes; Whisper writes Javanese
// "jw", which BCP 47 writes "jv".
var whisperLanguages = map[string]string{
	"afrikaans": "af", "albanian": "sq", "amharic": "am", "arabic": "ar", "armenian": "hy", "assamese": "as",
	"azerbaijani": "az", "bashkir": "ba", "basque": "eu", "belarusian": "be", "bengali": "bn", "bosnian": "bs",
	"breton": "br", "bulgarian": "bg", "cantonese": "yue", "catalan": "ca", "chinese": "zh", "croatian": "hr",
	"czech": "cs", "danish": "da", "dutch": "nl", "english": "en", "estonian": "et", "faroese": "fo",
	"finnish": "fi", "french": "fr", "galician": "gl", "georgian": "ka", "german": "de", "greek": "el",
	"gujarati": "gu", "haitian creole": "ht", "hausa": "ha", "hawaiian": "haw", "hebrew": "he", "hindi": "hi",
	"hungarian": "hu", "icelandic": "is", "indonesian": "id", "italian": "it", "japanese": "ja", "javanese": "jv",
	"kannada": "kn", "kazakh": "kk", "khmer": "km", "korean": "ko", "lao": "lo", "latin": "la",
	"latvian": "lv", "lingala": "ln", "lithuanian": "lt", "luxembourgish": "lb", "macedonian": "mk", "malagasy": "mg",
	"malay": "ms", "malayalam": "ml", "maltese": "mt", "maori": "mi", "marathi": "mr", "mongolian": "mn",
	"myanmar": "my", "nepali": "ne", "norwegian": "no", "nynorsk": "nn", "occitan": "oc", "pashto": "ps",
	"persian": "fa", "polish": "pl", "portuguese": "pt", "punjabi": "pa", "romanian": "ro", "russian": "ru",
	"sanskrit": "sa", "serbian": "sr", "shona": "sn", "sindhi": "sd", "sinhala": "si", "slovak": "sk",
	"slovenian": "sl", "somali": "so", "spanish": "es", "sundanese": "su", "swahili": "sw", "swedish": "sv",
	"tagalog": "tl", "tajik": "tg", "tamil": "ta", "tatar": "tt", "telugu": "te", "thai": "th",
	"tibetan": "bo", "turkish": "tr", "turkmen": "tk", "ukrainian": "uk", "urdu": "ur", "uzbek": "uz",
	"vietnamese": "vi", "welsh": "cy", "yiddish": "yi", "yoruba": "yo",
}
