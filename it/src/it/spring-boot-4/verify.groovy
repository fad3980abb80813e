def log = new File(basedir, 'build.log').text
assert log.contains('SPRING BOOT 4 OK') : 'the Boot 4 test did not finish'
assert log.contains('Tests run: 1, Failures: 0, Errors: 0') : 'the Boot 4 test did not pass'
true
