def log = new File(basedir, 'build.log').text
assert log.contains('BOM ONLY OK') : 'the program did not finish'
true
