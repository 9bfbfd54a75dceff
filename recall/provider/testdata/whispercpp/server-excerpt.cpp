// Excerpts of whisper.cpp's server: see README.md for the source and licence.

// examples/server-common.h
struct server_params {
    std::string hostname       = "127.0.0.1";
    std::string public_path    = "examples/server/public";
    std::string request_path   = "";
    std::string inference_path = "/inference";
    std::string tmp_dir        = ".";

    int32_t port          = 8080;
    int32_t read_timeout  = 600;
    int32_t write_timeout = 600;

    bool ffmpeg_converter = false;
    bool keep_input_audio = false;
};

// examples/server-common.cpp
const std::string json_format   = "json";
const std::string text_format   = "text";
const std::string srt_format    = "srt";
const std::string vjson_format  = "verbose_json";
const std::string vtt_format    = "vtt";

    json jres = json{
        {"task", task},
        {"language", language},
        {"duration", duration},
        {"text", text},
        {"segments", json::array()}
    };
        json segment = json{
            {"id", i},
            {"text", seg.text},
        };

        if (!no_timestamps) {
            segment["start"] = seg.t0 * 0.001f;  // ms -> seconds
            segment["end"] = seg.t1 * 0.001f;
        }

    // Inference endpoint
    svr.Post(sparams.request_path + sparams.inference_path, inference_handler);

    // Error handler
    svr.set_error_handler([](const httplib::Request & req, httplib::Response & res) {
        if (res.status == 400) {
            res.set_content("Invalid request", "text/plain");
        } else if (res.status != 500) {
            res.set_content("File Not Found (" + req.path + ")", "text/plain");
            res.status = 404;
        }
    });

// examples/server/server.cpp
        if (!req.has_file("file"))
        {
            fprintf(stderr, "error: no 'file' field in the request\n");
            const std::string error_resp = "{\"error\":\"no 'file' field in the request\"}";
            res.status = 400;
            res.set_content(error_resp, "application/json");
            return;
        }
    if (req.has_file("response_format"))
    {
        params.response_format = req.get_file_value("response_format").content;
    }
                fprintf(stderr, "%s: failed to process audio\n", argv[0]);
                res.status = 500; // Internal Server Error
                const std::string error_resp = "{\"error\":\"failed to process audio\"}";
        } else if (params.response_format == vjson_format) {
            res.set_content(
                format_verbose_json(result, params.temperature, float(pcmf32.size())/WHISPER_SAMPLE_RATE, params.no_timestamps, params.token_timestamps),
                "application/json");
        }
