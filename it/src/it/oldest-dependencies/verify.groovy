def log = new File(basedir, 'build.log').text
assert log.contains('FRESH PROJECT OK okhttp=5.3.0') : 'the program did not finish on the oldest versions'
['okhttp-jvm-5.3.0.jar', 'resilience4j-circuitbreaker-2.0.2.jar', 'jackson-databind-2.15.4.jar',
 'micrometer-core-1.10.13.jar', 'opentelemetry-api-1.30.0.jar', 'opentelemetry-sdk-1.30.0.jar'].each {
  assert log.contains('JAR ' + it) : it + ' not on the class path'
}
true
