#!/usr/bin/python3
"""A Python gRPC client (Debian's python3-grpcio; stubs generated here from the project's
proto/grpc_service.proto with python3-grpc-tools) against a real `sloserve serve
--grpc-port`: health, metadata, ModelInfer with typed and raw contents, an error code.
Usage: python_client_test.py SLOSERVE_BINARY PROTO_DIR"""
import os, socket, struct, subprocess, sys, tempfile, time


def main():
    binary, proto_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as gen:
        from grpc_tools import protoc
        rc = protoc.main(["protoc", "-I" + proto_dir, "--python_out=" + gen,
                          "--grpc_python_out=" + gen, os.path.join(proto_dir, "grpc_service.proto")])
        assert rc == 0, "protoc failed"
        sys.path.insert(0, gen)
        import grpc
        import grpc_service_pb2 as pb
        import grpc_service_pb2_grpc as pbg

        config = os.path.join(gen, "serve.yaml")
        with open(config, "w") as f:
            f.write("suite: ramsis-image\ntask: image\nhardware: n1-4cpu\nworkers: 2\n"
                    "slo_ms: 150\nseed: 1\nexecutor: {latency: sample}\n"
                    "policy: {name: fixed, dispatch: round_robin, batching: edf, "
                    "selection: fixed, variant: efficientnet_b0}\n"
                    "server: {input_shape: \"-1,16\"}\n")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        serve = subprocess.Popen([binary, "serve", config, "--port", "0", "--grpc-port", str(port),
                                  "--duration", "60"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline:
                line = serve.stderr.readline()
                if "sloserve: ready" in line:
                    break
                assert line, "serve exited before it was ready"
            stub = pbg.GRPCInferenceServiceStub(grpc.insecure_channel("127.0.0.1:%d" % port))
            assert stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live
            assert stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready
            assert stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10).name == "sloserve"
            meta = stub.ModelMetadata(pb.ModelMetadataRequest(name="image"), timeout=10)
            assert list(meta.inputs[0].shape) == [-1, 16], meta

            req = pb.ModelInferRequest(model_name="image", id="py-1")
            t = req.inputs.add(name=meta.inputs[0].name, datatype="FP32", shape=[2, 16])
            t.contents.fp32_contents.extend([0.25] * 32)
            req.parameters["slo_ms"].int64_param = 150
            resp = stub.ModelInfer(req, timeout=10)
            # No model_version (versions are not exposed); the variant is a parameter.
            assert resp.id == "py-1" and resp.model_version == "", resp
            assert resp.parameters["variant"].string_param == "efficientnet_b0", resp
            assert list(resp.outputs[0].shape) == [2, 1]
            assert len(resp.outputs[0].contents.fp32_contents) == 2

            raw = pb.ModelInferRequest(model_name="image")
            raw.inputs.add(name=meta.inputs[0].name, datatype="FP32", shape=[1, 16])
            raw.raw_input_contents.append(struct.pack("<16f", *range(16)))
            resp = stub.ModelInfer(raw, timeout=10)
            assert len(resp.raw_output_contents) == 1 and len(resp.raw_output_contents[0]) == 4

            t.datatype = "INT8"
            try:
                stub.ModelInfer(req, timeout=10)
                raise AssertionError("a wrong datatype was accepted")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
                assert "INT8" in e.details(), e.details()
            print("python gRPC client: all checks passed")
        finally:
            serve.terminate()
            serve.wait(timeout=30)


if __name__ == "__main__":
    main()
