def log = new File(basedir, 'build.log').text
assert log.contains('okhttp-4.12.0.jar') : 'OkHttp 4.12 should be first on the class path'
assert log.contains('java.lang.IllegalStateException: Resilient HTTP needs OkHttp 5.3.0 or newer (5.x), but found OkHttp 4.12.0')
assert log.contains('io.github.resilienthttp:resilient-http-bom')
assert log.contains('com.squareup.okhttp3:okhttp-bom')
assert log.contains('at io.github.resilienthttp.ResilientHttpClient.wrap(')
assert !log.contains('NoSuchMethodError')
assert !log.contains('REACHED EXECUTE')
true
